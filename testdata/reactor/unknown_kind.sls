oops:
  runnr.test.ping: []
