{% set state = 'memcache' %}
{% include "php/installed.jinja" %}
