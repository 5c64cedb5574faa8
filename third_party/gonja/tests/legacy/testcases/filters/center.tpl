'{{ "test"|center(3) }}'
'{{ "test"|center(19) }}'
'{{ "test"|center(20) }}'
{{ "test"|center(20)|length }}
'{{ "test2"|center(19) }}'
'{{ "test2"|center(20) }}'
{{ "test2"|center(20)|length }}
'{{ simple.chinese_hello_world|center(20) }}'
