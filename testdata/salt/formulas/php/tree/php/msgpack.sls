{% set state = 'msgpack' %}
{% include "php/installed.jinja" %}
