bad_indent:
  runner.test.arg:
    - arg: [a, b]
   - kwarg: {k: v}
