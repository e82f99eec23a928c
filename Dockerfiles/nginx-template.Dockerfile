# fnrun/nginx-template:v1 — the shell template functions/nginx-template.sh (the seeds' nginx
# walkthrough): an Nginx resource becomes a Service and a Deployment. The script re-runs itself
# under `fnrun wrap`, which fnrun-base provides (/usr/local/bin/fnrun); it runs as USER 65534.
FROM fnrun/fnrun-base:v1
COPY functions/nginx-template.sh /usr/local/bin/nginx-template.sh
ENTRYPOINT ["nginx-template.sh"]
