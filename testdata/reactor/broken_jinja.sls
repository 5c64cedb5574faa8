ok_line:
  runner.test.arg:
    - arg: [{{ data['id'] }]
