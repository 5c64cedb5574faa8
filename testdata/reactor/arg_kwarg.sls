echo_args:
  runner.test.arg:
    - arg:
      - {{ data['id'] }}
      - 42
    - kwarg:
        act: {{ data['act'] }}
        nested: {{ data['data'] | json }}
