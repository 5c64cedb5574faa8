{# Salt's documented DDNS reaction, legacy keyword-argument schema. #}
add_dns:
  runner.ddns.add_host:
    - zone: example.com
    - name: {{ data['name'] }}
    - ttl: 300
    - ip: {{ data['public_ips'][0] }}
