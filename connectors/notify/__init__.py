"""Notification senders: a JSON body POSTed to a webhook URL (Slack or generic), a message sent
over SMTP. They send what they are given once; what to send, to whom and how often to try is the
caller's."""
