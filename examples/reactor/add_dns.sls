# salt/cloud/<name>/deploy_script: register the new VM (A and PTR).
# Nameserver and TSIG key come from the ddns: section of the master config.
add_dns_{{ data['name'] }}:
  runner.ddns.add_host:
    - zone: example.com
    - name: {{ data['name'] }}
    - ip: {{ data['host'] }}
    - ttl: 300
