# Chapter 05 tests and calibration compare with cuBLAS.
list(APPEND extra_libraries CUDA::cublas)
