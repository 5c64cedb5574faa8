{% set state = 'openssl' %}
{% include "php/installed.jinja" %}
