# Chapter 11, exercise 1: which GPU code this chapter's library carries. Edit this file only.
#
# CHAPTER_CUDA_ARCHITECTURES becomes the CUDA_ARCHITECTURES of the chapter's code. Empty means
# "whatever the rest of the course is built for" (see the top-level README).
#
# TODO(1): Carry machine code (SASS) for compute capabilities 8.0 and 9.0, and PTX for the
#          newest of them, so that GPUs newer than 9.0 can still run the code by compiling
#          the PTX when the program starts. CMake's syntax: "NN-real" is SASS only,
#          "NN-virtual" is PTX only, and a plain "NN" is both.
set(CHAPTER_CUDA_ARCHITECTURES "")
