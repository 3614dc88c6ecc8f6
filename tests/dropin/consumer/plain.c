double helper(int n);
int main(void) { return helper(3) < 0; }
