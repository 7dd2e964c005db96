# run_tasks joins streams with events and process_batches_async frees scratch in stream order:
# their tests keep CUDA's hardware queues, so that a missing wait lets the streams run into
# each other and shows (see cmake/CourseTestList.cmake, hardware queues).
set(extra_concurrent_suites "^(RunTasks|ProcessBatchesAsync)")
