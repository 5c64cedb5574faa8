same:
  runner.test.ping: []
same:
  runner.test.ping: []
