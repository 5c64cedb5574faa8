{# Python-isms Salt reaction files use: loops, get, items, split, slicing and filters. #}
{% set short = data['id'].split('-')[0] %}
{% for ip in data.get('ips', []) %}
announce_{{ loop.index }}:
  runner.test.arg:
    - arg:
      - {{ ip }}
      - {{ short }}
      - {{ data['id'][:3] }}
    - kwarg:
        index: {{ loop.index }}
        owner: {{ data.get('owner', 'nobody') }}
        team: {{ data['team'] | default('ops') }}
        all: {{ data.get('ips') | join(',') }}
        grains: {{ data['grains'] | yaml }}
{% endfor %}
{% for key, value in data['grains'].items() %}
grain_{{ key }}:
  runner.test.arg:
    - arg: [{{ key }}, {{ value }}]
{% endfor %}
