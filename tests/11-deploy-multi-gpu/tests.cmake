# The visible-devices test once more, with CUDA_VISIBLE_DEVICES=1: the program must then see
# only the second GPU, numbered 0 (skipped, with the reason, on a machine with one GPU).
foreach(role IN LISTS roles)
  set(name "${role}.${chapter}.MultiGpu.UsesOnlyVisibleDevices.CUDA_VISIBLE_DEVICES_1")
  add_test(NAME "${name}" COMMAND ${role}_${id}_tests --gtest_filter=MultiGpu.UsesOnlyVisibleDevices)
  set_tests_properties("${name}" PROPERTIES
    ENVIRONMENT "CUDA_VISIBLE_DEVICES=1;CUDA_DISABLE_PTX_JIT=1"
    LABELS "${role};${chapter};correctness;multi-gpu"
    SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
    TIMEOUT ${COURSE_CORRECTNESS_TIMEOUT})
endforeach()
