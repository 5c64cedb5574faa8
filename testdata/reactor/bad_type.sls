sleepy:
  runner.test.sleep:
    - s_time: forever
