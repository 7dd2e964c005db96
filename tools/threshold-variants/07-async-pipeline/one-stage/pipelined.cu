// Threshold check: the reference pipeline with a single stage: asynchronous copies, but each
// waited for at once, so no better than the synchronous kernel. Both perf tests must fail.
#define REFERENCE_PIPELINE_STAGES 1
#include "../../../../solutions/07-async-pipeline/pipelined.cu"
