send_without_tag:
  runner.event.send:
    - data:
        id: {{ data['id'] }}
