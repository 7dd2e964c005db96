# Reference solution of chapter 11, exercise 1: SASS for 8.0 and 9.0, PTX for 9.0.
set(CHAPTER_CUDA_ARCHITECTURES "80-real;90")
