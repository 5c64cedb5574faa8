{% extends "sub/skeleton.tpl" %}

{% block body %}This is base's body{% block content %}Default content{% endblock %}{% endblock %}
