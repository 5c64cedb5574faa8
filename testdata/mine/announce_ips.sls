{# A Salt-style reaction that reads the mine while it renders. #}
{% set ips = salt['mine.get'](data['name'], 'network.ip_addrs') %}
announce:
  runner.event.send:
    - tag: myco/mine/seen
    - data:
        name: {{ data['name'] }}
        ips: {{ ips[data['name']] | json }}
        all_web: {{ salt['mine.get']('web*', 'network.ip_addrs') | length }}
        web: "{% for id, addrs in salt['mine.get']('web*', 'network.ip_addrs', tgt_type='glob').items() %}{{ id }}={{ addrs[0] }}{% endfor %}"
