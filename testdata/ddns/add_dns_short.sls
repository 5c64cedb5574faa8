# The same reaction relying on the master's ddns: defaults (nameserver, port,
# key, ttl): the reaction only says what to register.
add_dns:
  runner.ddns.add_host:
    - zone: example.test
    - name: {{ data['name'] }}
    - ip: {{ data['host'] }}
