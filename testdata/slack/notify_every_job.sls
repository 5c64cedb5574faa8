# The seed pattern Salt users write (reactor on every job start, posting to
# Slack), which loops in Salt: each post is itself a job whose start matches.
notify_slack:
  runner.slack.post:
    - channel: audit-feed
    - message: "job {{ data['jid'] }} {{ data['fun'] }} by {{ data['user'] }}"
