first:
  runner.test.arg:
    - arg: [one]

broken:
  runner.test.exception:
    - message: DNS server unreachable
    - retry:
        attempts: 1

after_first:
  runner.test.arg:
    - arg: [two]
    - require:
      - runner: first

after_broken:
  runner.test.arg:
    - arg: [never]
    - require:
      - broken

cleanup_on_failure:
  runner.test.arg:
    - arg: [cleanup]
    - onfail:
      - runner: broken

not_needed:
  runner.test.arg:
    - arg: [no]
    - onfail:
      - runner: first
