# Salt's reactor for salt/cloud/*/deploy_script, as in Salt's ddns runner
# documentation: register the new VM's address (and its PTR).
# @KEYFILE@ and @PORT@ are filled in by the tests.
add_dns_{{ data['name'] }}:
  runner.ddns.add_host:
    - zone: example.test
    - name: {{ data['name'] }}
    - ttl: 60
    - ip: {{ data['host'] }}
    - keyname: ddns-key
    - keyfile: @KEYFILE@
    - nameserver: 127.0.0.1
    - timeout: 5
    - port: @PORT@
