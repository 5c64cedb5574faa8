{# Salt's documented hand-off to orchestrate; brine has no state.orchestrate runner. #}
invoke_orchestrate_file:
  runner.state.orchestrate:
    - args:
      - mods: orchestrate.do_complex_thing
      - pillar:
          event_tag: {{ tag }}
          event_data: {{ data['data'] | json }}
