static double kernel(int i) { return i * 0.5; }
double solve(int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += kernel(i);
  return s;
}
