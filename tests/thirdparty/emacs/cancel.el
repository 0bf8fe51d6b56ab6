;;; cancel.el --- cadenza.cancelSession stops a long run_command  -*- lexical-binding: t -*-
;; Script: run_command that writes started.txt then sleeps 60 s. The permission prompt comes
;; through window/showMessageRequest (answered "Allow once"); once the command runs, the
;; session is cancelled through jsonrpc-request.

(cadenza-test-run
 (lambda ()
   (cadenza-test-open "a.py" "x = 1\n")
   (let ((session (cadenza-test-start "run the long command"))
         (started (expand-file-name "started.txt" cadenza-test-ws))
         began)
     (cadenza-test-note 'session session)
     (cadenza-test-wait-for "the command to start"
                            (lambda () (and (file-exists-p started)
                                            (> (file-attribute-size (file-attributes started)) 0))))
     (setq began (float-time))
     (cadenza-test-note 'cancel (cadenza-test-command "cadenza.cancelSession"
                                                      (list :sessionId session)))
     (cadenza-test-note 'stop (cadenza-test-wait-end session))
     (cadenza-test-note 'cancel_seconds (- (float-time) began))
     (cadenza-test-note 'results (vconcat (cadenza-test-tool-results session))))))
