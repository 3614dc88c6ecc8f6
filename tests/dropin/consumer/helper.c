double helper(int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += i;
  return s;
}
