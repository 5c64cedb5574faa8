{% set state = 'pear' %}
{% include "php/installed.jinja" %}
