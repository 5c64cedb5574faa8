# populate /etc/hosts with names and IP entries from your salt cluster
# the minion id has to be the fqdn for this to work

{%- set fqdn = grains['id'] %}
# example configuration for /etc/salt/minion:
#
# mine_functions:
#  network.ip_addrs:
#    - eth1
#  mine_interval: 2

{%- set minealias = salt['pillar.get']('hostsfile:alias', 'network.ip_addrs') %}
{%- set minions = salt['pillar.get']('hostsfile:minions', '*') %}
{%- set minions_type = salt['pillar.get']('hostsfile:type', 'glob') %}
{%- set hosts = {} %}
{%- set pillar_hosts = salt['pillar.get']('hostsfile:hosts', {}) %}
{%- set pillar_only = salt['pillar.get']('hostsfile:only', {}) %}
{%- set mine_hosts = salt['mine.get'](minions, minealias, tgt_type=minions_type) %}
{%- if mine_hosts is defined %}
{%-   do hosts.update(mine_hosts) %}
{%- endif %}
{%- do hosts.update(pillar_hosts) %}

{%- set domain = salt['pillar.get']('hostsfile:domain', '') %}
{%- for name, addrlist in hosts.items() %}
    {% if addrlist %}
{{ name }}-host-entry:
  host.present:
    - ip: {{ addrlist if addrlist is string else addrlist|first }}
    - names:
      - {{ name }}
        {%- if domain %}
      - {{ name }}.{{ domain }}
        {%- endif %}
    {%- endif %}
{% endfor %}

{%- for ip, hostnames in pillar_only.items() %}
{{ ip }}-host-entry:
  host.only:
    - name: {{ ip }}
  {% if hostnames is string %}
    - hostnames:
      - {{ hostnames }}
  {% else %}
    - hostnames: {{ hostnames | json }}
  {% endif %}
{% endfor %}
