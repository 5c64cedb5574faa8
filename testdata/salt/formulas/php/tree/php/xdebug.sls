{% set state = 'xdebug' %}
{% include "php/installed.jinja" %}
