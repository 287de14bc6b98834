/* A stand-in for Intel MKL's mkl.h with the declarations dense/openblas's
   mkl build uses, as MKL declares them (LP64: MKL_INT is int), so that
   `go vet -tags mkl` type-checks the binding where MKL is not installed.
   It is never linked. */
#ifndef SGCN_MKL_STUB_H
#define SGCN_MKL_STUB_H
#define MKL_INT int
typedef enum { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_LAYOUT;
typedef enum { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 } CBLAS_TRANSPOSE;
void cblas_sgemm(const CBLAS_LAYOUT Layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const MKL_INT M, const MKL_INT N, const MKL_INT K, const float alpha, const float *A,
                 const MKL_INT lda, const float *B, const MKL_INT ldb, const float beta, float *C,
                 const MKL_INT ldc);
enum { MKL_THREADING_INTEL = 0, MKL_THREADING_SEQUENTIAL = 1, MKL_THREADING_PGI = 2, MKL_THREADING_GNU = 3,
       MKL_THREADING_TBB = 4 };
int MKL_Set_Threading_Layer(int code);
void MKL_Get_Version_String(char *buf, int len);
#endif
