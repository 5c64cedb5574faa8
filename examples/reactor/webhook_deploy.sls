# salt/netapi/hook/deploy/<app>: a CI system announces a release; record it
# as an event the Slack audit rule (myco/deploy/*/done) posts.
{% set body = data.get('post', {}) %}
announce_{{ body.get('app', 'unknown') }}:
  runner.event.send:
    - tag: myco/deploy/{{ body.get('app', 'unknown') }}/done
    - data:
        app: {{ body.get('app', 'unknown') }}
        version: {{ body.get('version', '') }}
        user: {{ body.get('user', 'ci') }}
