good:
  runner.test.ping: []

typo:
  runner.tset.ping: []
