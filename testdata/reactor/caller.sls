touch_file:
  caller.file.touch:
    - args:
      - /tmp/{{ data['id'] }}
