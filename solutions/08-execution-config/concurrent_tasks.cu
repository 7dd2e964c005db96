// Reference solution of chapter 08, exercise 2: tasks round-robin over the streams, joined by events.
#include "execution_config.h"

void run_tasks(int count, float* partials, float* result, const cudaStream_t* streams, int stream_count,
               const cudaEvent_t* events) {
  for (int t = 0; t < count; ++t) launch_task(t, partials, streams[t % stream_count]);
  // streams[0] runs its own tasks in order; every other stream that got a task tells it when
  // its last one is done.
  for (int s = 1; s < stream_count && s < count; ++s) {
    cudaEventRecord(events[s], streams[s]);
    cudaStreamWaitEvent(streams[0], events[s], 0);
  }
  launch_combine(partials, count, result, streams[0]);
}
