#pragma once
typedef void (*Kernel)(double *, int);
struct Smoother {
  virtual ~Smoother() {}
  virtual void relax(double *x, int n) = 0;
};
Kernel PickKernel(int which);     // kernels.cpp
Smoother *MakeSmoother(int which); // kernels.cpp
void Run(Kernel k, Smoother *s, double *x, int n);
