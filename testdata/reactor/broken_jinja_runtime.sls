fine:
  runner.test.ping: []
{{ data['id'].nosuchmethod() }}
