function f() {
  return 1;
}
