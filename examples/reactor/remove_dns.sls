# salt/cloud/<name>/destroyed: remove the VM's A records and their PTRs.
remove_dns_{{ data['name'] }}:
  runner.ddns.delete_host:
    - zone: example.com
    - name: {{ data['name'] }}
