;;; question.el --- ask_user answered through eglot's window/showMessageRequest  -*- lexical-binding: t -*-
;; Script: ask_user "Use tabs?", then a final text. CADENZA_TEST_ANSWERS picks the button.

(cadenza-test-run
 (lambda ()
   (cadenza-test-open "a.py" "x = 1\n")
   (let ((session (cadenza-test-start "format a.py")))
     (cadenza-test-note 'session session)
     (cadenza-test-note 'stop (cadenza-test-wait-end session))
     (cadenza-test-note 'results (vconcat (cadenza-test-tool-results session))))))
