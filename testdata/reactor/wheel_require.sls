{# Accept pending web minions, then highstate them: the require is honoured by brine. #}
{% if data['act'] == 'pend' and data['id'].startswith('web-') %}
accept_minion:
  wheel.key.accept:
    - match: {{ data['id'] }}

highstate:
  local.state.highstate:
    - tgt: {{ data['id'] }}
    - require:
      - wheel: accept_minion
{% endif %}
