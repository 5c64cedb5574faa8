# A GitHub push webhook, signed with X-Hub-Signature-256, handled the way a
# Salt reaction file handles salt/netapi/hook events.
{% set repo = data['post']['repository']['full_name'] %}
record_push:
  runner.event.send:
    - tag: myco/push/{{ repo }}
    - data:
        ref: {{ data['post']['ref'] }}
        event: {{ data['headers']['X-Github-Event'] }}
