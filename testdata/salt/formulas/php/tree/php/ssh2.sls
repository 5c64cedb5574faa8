{% set state = 'ssh2' %}
{% include "php/installed.jinja" %}
