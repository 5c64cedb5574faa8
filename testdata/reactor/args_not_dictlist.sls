positional_runner:
  runner.test.arg:
    - args:
      - just_a_string
