# salt/cloud/<name>/destroyed: tell the team.
notify_{{ data['name'] }}:
  runner.slack.post:
    - channel: '#provisioning'
    - message: 'VM {{ data['name'] }} was destroyed'
