{# Unified args schema (Salt 2017.7.2+): a list of single-key mappings. #}
forward:
  runner.event.send:
    - args:
      - tag: myco/forwarded/{{ data['id'] }}
      - data:
          orig_tag: {{ tag }}
          payload: {{ data['data'] | json }}
