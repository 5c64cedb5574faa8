{% set state = 'phar' %}
{% include "php/installed.jinja" %}
