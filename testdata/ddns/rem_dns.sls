# Salt's reactor for salt/cloud/*/destroyed: remove the VM's address and PTR.
# @KEYFILE@ and @PORT@ are filled in by the tests.
rem_dns_{{ data['name'] }}:
  runner.ddns.delete_host:
    - zone: example.test
    - name: {{ data['name'] }}
    - keyname: ddns-key
    - keyfile: @KEYFILE@
    - nameserver: 127.0.0.1
    - timeout: 5
    - port: @PORT@
