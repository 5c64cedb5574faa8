{{ None is none }}
{{ simple.nil is none }}
{{ simple.nil is not none }}
{{ simple.number is none }}
