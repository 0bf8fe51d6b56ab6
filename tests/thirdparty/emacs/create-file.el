;;; create-file.el --- create_file in an editor without resourceOperations  -*- lexical-binding: t -*-
;; Script: create_file new/made.py, then a final text.

(cadenza-test-run
 (lambda ()
   (cadenza-test-open "a.py" "x = 1\n")
   (let ((session (cadenza-test-start "create new/made.py")))
     (cadenza-test-note 'session session)
     (cadenza-test-note 'stop (cadenza-test-wait-end session))
     (cadenza-test-note 'results (vconcat (cadenza-test-tool-results session))))))
